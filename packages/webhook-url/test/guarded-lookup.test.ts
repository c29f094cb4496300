import type { LookupAddress, LookupOptions } from "node:dns";
import { createAddressPolicy, createGuardedLookup, type AddressLookup as WebhookLookup } from "@gen/webhook-url";
import { fakeResolver } from "../../webhook-sender/test/helpers/fake-resolver.ts";

interface LookupResult {
  error: NodeJS.ErrnoException | null;
  address: string | LookupAddress[];
  family?: number;
}

function run(resolve: WebhookLookup, allowedCidrs: string[], options: LookupOptions): Promise<LookupResult> {
  const lookup = createGuardedLookup(resolve, createAddressPolicy(allowedCidrs));
  return new Promise((done) => lookup("hooks.test.example", options, (error, address, family) => done({ error, address, family })));
}

describe("createGuardedLookup", () => {
  it("always asks the resolver for every record, passing Node's family and hints on", async () => {
    const resolve = fakeResolver(() => ["127.0.0.2"]);
    await run(resolve, ["127.0.0.2/32"], { family: 4, hints: 32 });
    await run(resolve, ["127.0.0.2/32"], { all: true });
    expect(resolve.calls).toEqual([
      { hostname: "hooks.test.example", options: { all: true, family: 4, hints: 32 } },
      { hostname: "hooks.test.example", options: { all: true } },
    ]);
  });

  it("hands back the checked records, as a list or as the first one", async () => {
    const resolve = fakeResolver(() => ["127.0.0.2", "::ffff:127.0.0.2"]);
    await expect(run(resolve, ["127.0.0.2/32"], { all: true })).resolves.toEqual({
      error: null,
      address: [
        { address: "127.0.0.2", family: 4 },
        { address: "::ffff:127.0.0.2", family: 6 },
      ],
      family: undefined,
    });
    await expect(run(resolve, ["127.0.0.2/32"], {})).resolves.toEqual({ error: null, address: "127.0.0.2", family: 4 });
  });

  it.each([
    [["127.0.0.1"], []],
    [["127.0.0.2", "127.0.0.3"], ["127.0.0.2/32"]],
    [["127.0.0.3", "127.0.0.2"], ["127.0.0.2/32"]],
    [["127.0.0.2", "::ffff:127.0.0.3"], ["127.0.0.2/32"]],
    [["127.0.0.2", "::1"], ["127.0.0.2/32"]],
    [["127.0.0.2", "169.254.169.254"], ["127.0.0.2/32"]],
    [["127.0.0.2", "127.1"], ["127.0.0.2/32"]],
  ])("refuses the whole answer %j when any record is blocked (allowed: %j)", async (answer, allowed) => {
    const result = await run(
      fakeResolver(() => answer),
      allowed,
      { all: true },
    );
    expect(result.error?.code).toBe("ERR_WEBHOOK_BLOCKED_ADDRESS");
    expect(result.address).toEqual([]);
  });

  it("turns resolver failures and empty answers into resolution errors", async () => {
    const notFound = await run(
      fakeResolver(() => ({ code: "ENOTFOUND" })),
      [],
      { all: true },
    );
    expect(notFound.error?.code).toBe("ERR_WEBHOOK_RESOLUTION_FAILED");
    expect((notFound.error?.cause as NodeJS.ErrnoException).code).toBe("ENOTFOUND");

    const empty = await run(
      fakeResolver(() => []),
      [],
      {},
    );
    expect(empty.error?.code).toBe("ERR_WEBHOOK_RESOLUTION_FAILED");

    const throwing: WebhookLookup = () => {
      throw new Error("resolver exploded");
    };
    expect((await run(throwing, [], { all: true })).error?.code).toBe("ERR_WEBHOOK_RESOLUTION_FAILED");
  });

  it("ignores a second answer from a misbehaving resolver", async () => {
    const twice: WebhookLookup = (_hostname, _options, callback) => {
      callback(null, [{ address: "127.0.0.2", family: 4 }]);
      callback(null, [{ address: "127.0.0.3", family: 4 }]);
    };
    const answers: unknown[] = [];
    const lookup = createGuardedLookup(twice, createAddressPolicy(["127.0.0.2/32"]));
    lookup("hooks.test.example", { all: true }, (_error, address) => answers.push(address));
    await new Promise((resolve) => setImmediate(resolve));
    expect(answers).toEqual([[{ address: "127.0.0.2", family: 4 }]]);
  });
});
