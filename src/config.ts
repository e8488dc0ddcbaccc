/**
 * Configuration comes from the environment only, is read once at start, checked, and frozen.
 * Every variable, its default and its meaning is in config/schema.ts and docs/configuration.md.
 */
export { ConfigError, loadConfig } from './config/load.js'
export type { Config, LogLevel } from './config/schema.js'
