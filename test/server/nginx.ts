/**
 * Runs the shipped nginx site (deploy/nginx-curriculum-api.conf) as an unprivileged foreground
 * nginx in a temp folder: its own prefix, pid, logs and certificate, ports picked free. The site
 * is rendered by replacing the values an operator replaces (server name, certificate paths) and
 * those only a test needs (ports, log folder); each must be found exactly as often as the file
 * has it, so a site that drifts from what is replaced here fails loudly instead of being tested
 * in part.
 */
import { type ChildProcess, execFileSync, spawn } from 'node:child_process'
import fs from 'node:fs'
import path from 'node:path'
import { ROOT } from './process.js'

export const NGINX = '/usr/sbin/nginx'
export const SITE = path.join(ROOT, 'deploy/nginx-curriculum-api.conf')

/** A self-signed certificate for `localhost` and 127.0.0.1; returns the PEM of the certificate. */
export function selfSignedCertificate(dir: string): string {
  fs.mkdirSync(dir, { recursive: true })
  execFileSync(
    'openssl',
    [
      'req',
      '-x509',
      '-newkey',
      'ec',
      '-pkeyopt',
      'ec_paramgen_curve:prime256v1',
      '-nodes',
      '-days',
      '1',
      '-subj',
      '/CN=localhost',
      '-addext',
      'subjectAltName=DNS:localhost,IP:127.0.0.1',
      '-keyout',
      path.join(dir, 'privkey.pem'),
      '-out',
      path.join(dir, 'fullchain.pem'),
    ],
    { stdio: 'pipe' },
  )
  return fs.readFileSync(path.join(dir, 'fullchain.pem'), 'utf8')
}

/** Replaces `from` by `to`, and throws unless it was found exactly `count` times. */
function replaceExactly(text: string, from: string | RegExp, to: string, count: number): string {
  const pattern = typeof from === 'string' ? new RegExp(from.replace(/[.*+?^${}()|[\]\\]/g, '\\$&'), 'g') : from
  const found = text.match(pattern)?.length ?? 0
  if (found !== count) throw new Error(`the site has ${found} of ${String(from)}, the test expects ${count}`)
  return text.replace(pattern, to)
}

export interface SitePorts {
  https: number
  http: number
  service: number
}

/** The shipped site with this machine's ports, the temp folder's certificate and logs, on 127.0.0.1. */
export function renderSite(site: string, ports: SitePorts, tlsDir: string, logDir: string): string {
  let text = replaceExactly(site, '/etc/letsencrypt/live/api.example.org/', `${tlsDir}/`, 2)
  text = replaceExactly(text, 'server_name api.example.org;', 'server_name localhost;', 2)
  text = replaceExactly(text, '/var/log/nginx/', `${logDir}/`, 3)
  text = replaceExactly(text, 'server 127.0.0.1:3000;', `server 127.0.0.1:${ports.service};`, 1)
  // The test machine may have no IPv6: its listen lines go, the IPv4 ones stay.
  text = replaceExactly(text, /^ *listen \[::\]:\d+.*\n/gm, '', 4)
  text = replaceExactly(text, /^( *)listen 443 /gm, `$1listen 127.0.0.1:${ports.https} `, 2)
  text = replaceExactly(text, /^( *)listen 80([ ;])/gm, `$1listen 127.0.0.1:${ports.http}$2`, 2)
  return text
}

export interface RunningNginx {
  dir: string
  accessLog(): string
  /**
   * The access log once it has a line matching `pattern`: nginx writes a request's line after the
   * response has gone, so a client that has its answer may read the log before it is there.
   */
  accessLogWith(pattern: RegExp, timeoutMs?: number): Promise<string>
  errorLog(): string
  stop(): Promise<void>
}

/** Starts nginx in the foreground with the rendered site as its only server configuration. */
export async function startNginx(dir: string, site: string): Promise<RunningNginx> {
  for (const sub of ['logs', 'temp']) fs.mkdirSync(path.join(dir, sub), { recursive: true })
  fs.writeFileSync(path.join(dir, 'site.conf'), site)
  const temp = (name: string) => `${name}_temp_path ${path.join(dir, 'temp', name)};`
  const main = [
    'daemon off;',
    'worker_processes 1;',
    // As root, workers would otherwise run as nobody, who cannot enter the temp folder.
    ...(process.getuid?.() === 0 ? ['user root root;'] : []),
    `pid ${path.join(dir, 'nginx.pid')};`,
    `error_log ${path.join(dir, 'logs/error.log')} info;`,
    'events { worker_connections 64; }',
    'http {',
    `  access_log ${path.join(dir, 'logs/other.log')};`,
    `  ${temp('client_body')} ${temp('proxy')} ${temp('fastcgi')} ${temp('uwsgi')} ${temp('scgi')}`,
    `  include ${path.join(dir, 'site.conf')};`,
    '}',
    '',
  ].join('\n')
  fs.writeFileSync(path.join(dir, 'nginx.conf'), main)
  const args = ['-p', dir, '-c', path.join(dir, 'nginx.conf'), '-e', path.join(dir, 'logs/error.log')]
  execFileSync(NGINX, [...args, '-t'], { stdio: 'pipe' })
  const child: ChildProcess = spawn(NGINX, args, { stdio: ['ignore', 'pipe', 'pipe'] })
  let out = ''
  child.stdout!.on('data', (chunk: Buffer) => (out += chunk.toString()))
  child.stderr!.on('data', (chunk: Buffer) => (out += chunk.toString()))
  const exited = new Promise<void>((resolve) => child.on('exit', () => resolve()))
  const read = (file: string) => {
    const full = path.join(dir, 'logs', file)
    return fs.existsSync(full) ? fs.readFileSync(full, 'utf8') : ''
  }
  // Ready once the master has written its own pid, which it does after opening the listening
  // sockets. `nginx -t` leaves an empty pid file behind, so the file's presence alone says nothing.
  const pidFile = path.join(dir, 'nginx.pid')
  const written = () => fs.existsSync(pidFile) && fs.readFileSync(pidFile, 'utf8').trim() === String(child.pid)
  const started = Date.now()
  while (!written()) {
    if (child.exitCode !== null) throw new Error(`nginx exited:\n${out}${read('error.log')}`)
    if (Date.now() - started > 10_000) {
      child.kill('SIGKILL')
      throw new Error(`nginx did not start:\n${out}${read('error.log')}`)
    }
    await new Promise((resolve) => setTimeout(resolve, 50))
  }
  return {
    dir,
    accessLog: () => read('curriculum-api.access.log'),
    async accessLogWith(pattern, timeoutMs = 5000) {
      const until = Date.now() + timeoutMs
      for (;;) {
        const log = read('curriculum-api.access.log')
        if (pattern.test(log) || Date.now() > until) return log
        await new Promise((resolve) => setTimeout(resolve, 20))
      }
    },
    errorLog: () => read('error.log') + read('curriculum-api.error.log'),
    async stop() {
      if (child.exitCode !== null || child.signalCode !== null) return
      // SIGQUIT: a graceful stop; the master waits for its worker, so nothing is left behind.
      child.kill('SIGQUIT')
      const late = setTimeout(() => child.kill('SIGKILL'), 5000)
      await exited
      clearTimeout(late)
    },
  }
}
