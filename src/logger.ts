/**
 * pino, as JSON lines for machines; pretty-printed only when a person watches a terminal
 * (chosen by whether stdout is a TTY, not by NODE_ENV).
 */
import { pino, type Logger } from 'pino'
import type { LogLevel } from './config.js'

export function createLogger(level: LogLevel): Logger {
  const options = {
    level,
    // Keys must never reach a log, even when a client puts one where it does not belong.
    redact: { paths: ['req.headers.authorization', 'headers.authorization', 'authorization'], censor: '[redacted]' },
  }
  if (process.stdout.isTTY) {
    return pino({
      ...options,
      transport: { target: 'pino-pretty', options: { translateTime: 'SYS:HH:MM:ss.l', ignore: 'pid,hostname' } },
    })
  }
  return pino(options)
}
