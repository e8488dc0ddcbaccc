/** Who made a change from the dashboard: a case given one writes the change's audit row in the same transaction. */
export interface OperatorAudit {
  /** `account:<email>`, as the audit log names a signed-in operator. */
  actor: string
}
