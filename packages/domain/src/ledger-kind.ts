// The kind column of `ledger_entries`. Per task: one reserve, then exactly one charge and one refund
// (reserved = charged + refunded); grants carry no task. A carry_forward carries no task either: it
// stands for the entries of the user's tasks removed by retention (one row per user, replaced at
// every removal), its delta their sum, so that a balance still equals the sum of the ledger.
export const LEDGER_KINDS = ["grant", "reserve", "charge", "refund", "carry_forward"] as const;

export type LedgerKind = (typeof LEDGER_KINDS)[number];

export const LedgerKind = {
  Grant: "grant",
  Reserve: "reserve",
  Charge: "charge",
  Refund: "refund",
  CarryForward: "carry_forward",
} as const satisfies Record<string, LedgerKind>;
