-- AlterTable
ALTER TABLE "tasks" ADD COLUMN     "upstream_id" TEXT;
