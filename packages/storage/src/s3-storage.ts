import { DeleteObjectsCommand, PutObjectCommand, S3Client } from "@aws-sdk/client-s3";
import { checkFile, checkKey, publicUrl } from "./media-key.ts";
import type { Storage, StoredFile } from "./storage.ts";
import { StorageError } from "./storage-error.ts";

export interface S3StorageOptions {
  bucket: string;
  /** Public base of the bucket's objects (a CDN or the bucket's website address). */
  cdnUrl: string;
  /** Default `us-east-1`; many S3-compatible services ignore it. */
  region?: string;
  /** An S3-compatible service (MinIO, R2, …); AWS S3 when absent. */
  endpoint?: string;
  forcePathStyle?: boolean;
  /** The SDK's default chain (AWS_ACCESS_KEY_ID/AWS_SECRET_ACCESS_KEY, profile, instance role) when absent. */
  credentials?: { accessKeyId: string; secretAccessKey: string; sessionToken?: string };
  /** SDK attempts per put, default 3. The worker has its own retries; tests use 1. */
  maxAttempts?: number;
  /** Bound on one put (all attempts), default 60000. */
  timeoutMs?: number;
}

const DEFAULT_TIMEOUT_MS = 60_000;
// DeleteObjects takes at most 1,000 keys per request.
const DELETE_BATCH = 1000;

/**
 * Objects in an S3 bucket, written with one PutObject each (overwrite is the idempotency) and
 * removed with DeleteObjects, 1,000 keys a request (a missing key is deleted as far as S3 says).
 */
export function createS3Storage(options: S3StorageOptions): Storage {
  if (!options.bucket) throw new StorageError("an S3 bucket is required");
  const timeoutMs = options.timeoutMs ?? DEFAULT_TIMEOUT_MS;
  const client = new S3Client({
    region: options.region ?? "us-east-1",
    ...(options.endpoint ? { endpoint: options.endpoint } : {}),
    forcePathStyle: options.forcePathStyle ?? false,
    ...(options.credentials ? { credentials: options.credentials } : {}),
    maxAttempts: options.maxAttempts ?? 3,
    // Several S3-compatible services reject the SDK's default CRC32 trailer; only send
    // checksums they require when talking to one of them.
    ...(options.endpoint ? { requestChecksumCalculation: "WHEN_REQUIRED" as const } : {}),
    requestHandler: { connectionTimeout: Math.min(timeoutMs, 10_000), requestTimeout: timeoutMs },
  });
  return {
    async put(key: string, data: Buffer, contentType: string): Promise<StoredFile> {
      const file = checkFile(key, data, contentType);
      try {
        await client.send(
          new PutObjectCommand({ Bucket: options.bucket, Key: file.key, Body: data, ContentType: file.contentType, ContentLength: data.length }),
          { abortSignal: AbortSignal.timeout(timeoutMs) },
        );
      } catch (error) {
        throw new StorageError(`could not store "${key}" in bucket ${options.bucket}: ${describe(error)}`, { cause: error });
      }
      return { key: file.key, url: publicUrl(options.cdnUrl, file.key), bytes: data.length };
    },
    async delete(keys: readonly string[]): Promise<void> {
      for (const key of keys) checkKey(key);
      for (let i = 0; i < keys.length; i += DELETE_BATCH) {
        const batch = keys.slice(i, i + DELETE_BATCH);
        let failed: { Key?: string | undefined; Code?: string | undefined; Message?: string | undefined }[];
        try {
          const result = await client.send(
            new DeleteObjectsCommand({ Bucket: options.bucket, Delete: { Objects: batch.map((Key) => ({ Key })), Quiet: true } }),
            { abortSignal: AbortSignal.timeout(timeoutMs) },
          );
          failed = result.Errors ?? [];
        } catch (error) {
          throw new StorageError(`could not remove ${batch.length} objects from bucket ${options.bucket}: ${describe(error)}`, { cause: error });
        }
        // A 200 answer can still refuse some keys, one by one.
        if (failed.length > 0) {
          const first = failed[0]!;
          throw new StorageError(
            `could not remove ${failed.length} of ${batch.length} objects from bucket ${options.bucket}: "${first.Key}": ${first.Code}: ${first.Message}`,
          );
        }
      }
    },
  };
}

function describe(error: unknown): string {
  if (!(error instanceof Error)) return String(error);
  const status = (error as { $metadata?: { httpStatusCode?: number } }).$metadata?.httpStatusCode;
  return status === undefined ? `${error.name}: ${error.message}` : `${error.name} (HTTP ${status}): ${error.message}`;
}
