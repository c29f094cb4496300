// The kind column of `ledger_entries`. Per task: one reserve, then exactly one charge and one refund
// (reserved = charged + refunded); grants carry no task.
export const LEDGER_KINDS = ["grant", "reserve", "charge", "refund"] as const;

export type LedgerKind = (typeof LEDGER_KINDS)[number];

export const LedgerKind = {
  Grant: "grant",
  Reserve: "reserve",
  Charge: "charge",
  Refund: "refund",
} as const satisfies Record<string, LedgerKind>;
