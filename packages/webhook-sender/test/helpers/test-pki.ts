import { generate } from "selfsigned";

export interface KeyPair {
  key: string;
  cert: string;
}

const DAY_MS = 24 * 60 * 60 * 1000;

/** A throwaway certificate authority, made at test time so nothing secret lives in the repo. */
export async function createTestCa(commonName: string): Promise<KeyPair> {
  const pems = await generate([{ name: "commonName", value: commonName }], {
    keyType: "ec",
    algorithm: "sha256",
    notBeforeDate: new Date(Date.now() - DAY_MS),
    notAfterDate: new Date(Date.now() + 30 * DAY_MS),
    extensions: [
      { name: "basicConstraints", cA: true, critical: true },
      { name: "keyUsage", keyCertSign: true, cRLSign: true, critical: true },
    ],
  });
  return { key: pems.private, cert: pems.cert };
}

export interface LeafOptions {
  /** Signing CA; self-signed when absent. */
  ca?: KeyPair;
  notBeforeDate?: Date;
  notAfterDate?: Date;
}

/** A server certificate for `dnsNames`. */
export async function issueServerCert(dnsNames: string[], options: LeafOptions = {}): Promise<KeyPair> {
  const pems = await generate([{ name: "commonName", value: dnsNames[0] ?? "server" }], {
    keyType: "ec",
    algorithm: "sha256",
    notBeforeDate: options.notBeforeDate ?? new Date(Date.now() - DAY_MS),
    notAfterDate: options.notAfterDate ?? new Date(Date.now() + 30 * DAY_MS),
    ...(options.ca ? { ca: options.ca } : {}),
    extensions: [
      { name: "basicConstraints", cA: false },
      { name: "keyUsage", digitalSignature: true, keyEncipherment: true },
      { name: "extKeyUsage", serverAuth: true },
      { name: "subjectAltName", altNames: dnsNames.map((value) => ({ type: 2 as const, value })) },
    ],
  });
  return { key: pems.private, cert: pems.cert };
}
