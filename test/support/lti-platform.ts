/** The tests' learning platform is the demo platform (src/demo/lti-platform.ts), which a person can run too. */
export * from '../../src/demo/lti-platform.js'
