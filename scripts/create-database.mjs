// Creates the database named by DATABASE_URL when it does not exist (PostgreSQL has no
// CREATE DATABASE IF NOT EXISTS). Connects to the server's `postgres` database to do it.
import pg from "pg";

const target = new URL(process.env.DATABASE_URL || "postgresql://postgres@127.0.0.1:5432/gen");
const name = decodeURIComponent(target.pathname.slice(1));
const admin = new URL(target);
admin.pathname = "/postgres";

const client = new pg.Client({ connectionString: admin.toString(), connectionTimeoutMillis: 3000 });
try {
  await client.connect();
  const { rowCount } = await client.query("SELECT 1 FROM pg_database WHERE datname = $1", [name]);
  if (rowCount === 0) await client.query(`CREATE DATABASE "${name.replaceAll('"', '""')}"`);
} catch (error) {
  console.error(`setup: PostgreSQL does not answer at ${target.host} (DATABASE_URL): ${error.message}`);
  process.exit(1);
} finally {
  await client.end().catch(() => {});
}
