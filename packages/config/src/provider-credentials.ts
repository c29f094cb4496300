/**
 * The environment variable holding each real provider's credential, under the name its SDK reads
 * by default. The simulated provider and the "http" upstream need none.
 */
export const PROVIDER_CREDENTIAL_VARIABLES = {
  replicate: "REPLICATE_API_TOKEN",
  fal: "FAL_KEY",
  openai: "OPENAI_API_KEY",
  runway: "RUNWAYML_API_SECRET",
} as const;

export type CredentialedProvider = keyof typeof PROVIDER_CREDENTIAL_VARIABLES;

/** The credentials that are set (a blank variable counts as unset). */
export function providerCredentials(env: Record<string, string | undefined>): Partial<Record<CredentialedProvider, string>> {
  const credentials: Partial<Record<CredentialedProvider, string>> = {};
  for (const [provider, variable] of Object.entries(PROVIDER_CREDENTIAL_VARIABLES) as [CredentialedProvider, string][]) {
    const value = env[variable]?.trim();
    if (value) credentials[provider] = value;
  }
  return credentials;
}
