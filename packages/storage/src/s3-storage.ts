import { DeleteObjectsCommand, ListObjectsV2Command, PutObjectCommand, S3Client } from "@aws-sdk/client-s3";
import { checkArchiveKey, checkFile, checkPrefix, publicUrl } from "./media-key.ts";
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

/** Objects in an S3 bucket, written with one PutObject each (overwrite is the idempotency). */
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
    async deletePrefix(prefix: string): Promise<void> {
      checkPrefix(prefix);
      try {
        // A listing page holds at most 1,000 keys, which is also DeleteObjects' limit.
        for (let token: string | undefined; ;) {
          const page = await client.send(new ListObjectsV2Command({ Bucket: options.bucket, Prefix: prefix, ContinuationToken: token }), {
            abortSignal: AbortSignal.timeout(timeoutMs),
          });
          const keys = (page.Contents ?? []).flatMap((object) => (object.Key ? [{ Key: object.Key }] : []));
          if (keys.length > 0) {
            const deleted = await client.send(new DeleteObjectsCommand({ Bucket: options.bucket, Delete: { Objects: keys, Quiet: true } }), {
              abortSignal: AbortSignal.timeout(timeoutMs),
            });
            const failed = deleted.Errors ?? [];
            if (failed.length > 0)
              throw new StorageError(`${failed.length} objects were not deleted, first ${failed[0]?.Key}: ${failed[0]?.Code} ${failed[0]?.Message}`);
          }
          if (!page.IsTruncated || !page.NextContinuationToken) break;
          token = page.NextContinuationToken;
        }
      } catch (error) {
        if (error instanceof StorageError) throw error;
        throw new StorageError(`could not delete "${prefix}" in bucket ${options.bucket}: ${describe(error)}`, { cause: error });
      }
    },
    async putArchive(key: string, data: Buffer): Promise<void> {
      checkArchiveKey(key, data);
      try {
        await client.send(
          new PutObjectCommand({ Bucket: options.bucket, Key: key, Body: data, ContentType: "application/x-ndjson", ContentLength: data.length }),
          { abortSignal: AbortSignal.timeout(timeoutMs) },
        );
      } catch (error) {
        throw new StorageError(`could not store "${key}" in bucket ${options.bucket}: ${describe(error)}`, { cause: error });
      }
    },
  };
}

function describe(error: unknown): string {
  if (!(error instanceof Error)) return String(error);
  const status = (error as { $metadata?: { httpStatusCode?: number } }).$metadata?.httpStatusCode;
  return status === undefined ? `${error.name}: ${error.message}` : `${error.name} (HTTP ${status}): ${error.message}`;
}
