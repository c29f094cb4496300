-- How far a periodic job that walks the tasks in time order has come (the media retention: the
-- last task whose media it removed), so that each run starts where the last one ended instead of
-- listing the storage again for every task past the retention.
CREATE TABLE "maintenance_marks" (
    "name" TEXT NOT NULL,
    "through_at" TIMESTAMPTZ(3) NOT NULL,
    "through_id" TEXT NOT NULL,
    "updated_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "maintenance_marks_pkey" PRIMARY KEY ("name")
);
