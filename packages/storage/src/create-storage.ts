import { createLocalStorage } from "./local-storage.ts";
import { createS3Storage } from "./s3-storage.ts";
import type { Storage } from "./storage.ts";
import { StorageError } from "./storage-error.ts";

/** The part of @gen/config's Config this package reads, so `createStorage(config)` works as is. */
export interface StorageSettings {
  cdnUrl: string;
  storage: {
    backend: "local" | "s3";
    dir: string;
    s3Bucket?: string | undefined;
    s3Region?: string | undefined;
    s3Endpoint?: string | undefined;
    s3ForcePathStyle?: boolean | undefined;
  };
}

/** The backend STORAGE_BACKEND names. S3 credentials come from the AWS SDK's default chain. */
export function createStorage(settings: StorageSettings): Storage {
  const { storage, cdnUrl } = settings;
  switch (storage.backend) {
    case "local":
      return createLocalStorage({ dir: storage.dir, cdnUrl });
    case "s3":
      if (!storage.s3Bucket) throw new StorageError("S3_BUCKET is required when STORAGE_BACKEND=s3");
      return createS3Storage({
        bucket: storage.s3Bucket,
        cdnUrl,
        ...(storage.s3Region ? { region: storage.s3Region } : {}),
        ...(storage.s3Endpoint ? { endpoint: storage.s3Endpoint } : {}),
        forcePathStyle: storage.s3ForcePathStyle ?? false,
      });
    default:
      throw new StorageError(`unknown storage backend "${String(storage.backend satisfies never)}"`);
  }
}
