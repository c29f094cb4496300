export const BLOCKED_ADDRESS_CODE = "ERR_WEBHOOK_BLOCKED_ADDRESS";

/** Raised from inside name resolution, so the socket never opens (docs/api.md#private-address-block). */
export class BlockedAddressError extends Error {
  readonly code = BLOCKED_ADDRESS_CODE;

  constructor(
    readonly host: string,
    readonly address: string,
    readonly reason: string,
  ) {
    super(`${host} resolved to ${address} (${reason}), which may not be reached`);
    this.name = "BlockedAddressError";
  }
}
