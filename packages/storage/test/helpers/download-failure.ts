import { DownloadError } from "../../src/index.ts";

/** The DownloadError a download rejects with; anything else (or success) fails the test. */
export async function downloadFailure(download: Promise<unknown>): Promise<DownloadError> {
  const error: unknown = await download.then(
    () => undefined,
    (caught: unknown) => caught,
  );
  if (!(error instanceof DownloadError)) throw new Error(`expected a DownloadError, got ${String(error)}`);
  return error;
}
