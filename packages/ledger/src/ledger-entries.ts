import { LedgerKind } from "@gen/domain";
import type { LedgerEntryValues } from "@gen/db";

// What each movement of credits writes. `amount` is the magnitude, `delta` the effect on
// users.credits, so a balance always equals the sum of its deltas and, per closed task,
// reserve = charge + refund (docs/api.md#credits-and-refunds).

export const reserveEntry = (price: number): LedgerEntryValues => ({ kind: LedgerKind.Reserve, amount: price, delta: -price });

/** The reservation is already off the balance: the charge keeps it there (delta 0), the refund gives back the rest. */
export const closingEntries = (charged: number, refunded: number): LedgerEntryValues[] => [
  { kind: LedgerKind.Refund, amount: refunded, delta: refunded },
  { kind: LedgerKind.Charge, amount: charged, delta: 0 },
];

export const grantEntry = (amount: number): LedgerEntryValues => ({ kind: LedgerKind.Grant, amount, delta: amount });
