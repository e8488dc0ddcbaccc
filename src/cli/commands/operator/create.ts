/**
 * `curriculum operator create`: an operator admin, for the first operator (or a new one when every
 * admin is gone); other operators are invited from the dashboard's Operators page, so that their
 * address is proven and they choose their own password. Nobody can sign up as one. The password
 * comes from standard input (or is generated and printed once), never from the command line, where
 * shell history would keep it.
 */
import { randomBytes } from 'node:crypto'
import type { Command } from 'commander'
import { systemClock } from '../../../clock.js'
import type { Audit } from '../../audit.js'
import { act } from '../../command-action.js'
import { defineCommand } from '../../options.js'
import { CliError, type CommandResult } from '../../output.js'

async function readStdin(): Promise<string> {
  const chunks: Buffer[] = []
  for await (const chunk of process.stdin) chunks.push(chunk as Buffer)
  return Buffer.concat(chunks)
    .toString('utf8')
    .replace(/\r?\n$/, '')
}

export function defineOperatorCreate(operator: Command): void {
  defineCommand(
    operator,
    'create',
    'Create an operator admin account for the dashboard (others are invited from its Operators page)',
    [
      'curriculum operator create --email ops@example.org          # generates a password and prints it once',
      'printf %s "$PASSWORD" | curriculum operator create --email ops@example.org --password-stdin',
    ],
    { audit: 'operator.create' },
  )
    .requiredOption('--email <address>', 'the operator’s e-mail address (their sign-in name)')
    .option('--password-stdin', 'read the password from standard input instead of generating one')
    .action(act(createOperatorAccount))
}

async function createOperatorAccount(command: Command, audit: Audit): Promise<CommandResult> {
  const options = command.opts<{ email: string; passwordStdin?: boolean }>()
  const { isEmail } = await import('../../../domain/email.js')
  const { hashPassword, passwordProblem } = await import('../../../domain/passwords.js')
  const email = options.email.trim().toLowerCase()
  if (!isEmail(email)) throw new CliError(`"${options.email}" is not an e-mail address`, [], 2)
  const generated = options.passwordStdin !== true
  const password = generated ? randomBytes(18).toString('base64url') : await readStdin()
  const weak = passwordProblem(password, email)
  if (weak !== null) throw new CliError(`password refused: ${weak}`)
  const passwordHash = await hashPassword(password)
  const account = await audit.change(async ({ db }) => {
    const { createOperator } = await import('../../../cases/accounts.js')
    const row = await createOperator(db, { email, passwordHash }, systemClock.now())
    // Whether the password was generated, never the password or its hash.
    return { value: row, target: `account:${row.id}`, changed: { email, role: 'admin', passwordGenerated: generated } }
  })
  return {
    data: {
      account: { id: account.id, email: account.email, role: account.role, operatorRole: account.operator_role },
      ...(generated ? { password } : {}),
    },
    text: [
      `created operator admin ${account.email} (${account.id})`,
      ...(generated ? [`password (shown once): ${password}`] : []),
    ],
  }
}
