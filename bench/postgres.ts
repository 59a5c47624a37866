// PostgreSQL for the suites that measure it beside the other engines: whether a server answers (the suite skips its
// PostgreSQL rows with one line when none does), and databases of a suite's own, created and dropped by name.
import pg from "pg";

/** The server's URL when one answers (CHRYSALIS_BENCH_DATABASE_URL, CHRYSALIS_TEST_DATABASE_URL, the local default). */
export async function postgresServer(suite: string): Promise<string | undefined> {
  const url = process.env.CHRYSALIS_BENCH_DATABASE_URL || process.env.CHRYSALIS_TEST_DATABASE_URL || "postgres://postgres@127.0.0.1:5432/test";
  const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: 3000 });
  try {
    await client.connect();
    return url;
  } catch (error) {
    console.log(`${suite} bench: PostgreSQL skipped, no server at ${new URL(url).host} (${(error as Error).message})`);
    return undefined;
  } finally {
    await client.end().catch(() => undefined);
  }
}

/** One statement on a connection of its own (CREATE/DROP DATABASE cannot run in a pooled transaction). */
export async function adminQuery<T extends pg.QueryResultRow = pg.QueryResultRow>(serverUrl: string, sql: string, params: unknown[] = []): Promise<T[]> {
  const client = new pg.Client({ connectionString: serverUrl, connectionTimeoutMillis: 5000 });
  await client.connect();
  try {
    return (await client.query<T>(sql, params)).rows;
  } finally {
    await client.end();
  }
}

/** The URL of database `name` on the server `serverUrl` names. */
export function databaseUrl(serverUrl: string, name: string): string {
  const url = new URL(serverUrl);
  url.pathname = `/${name}`;
  return url.toString();
}

/** A new database with a random name under `prefix`, and how to drop it. */
export async function benchDatabase(serverUrl: string, prefix: string): Promise<{ name: string; url: string; remove(): Promise<void> }> {
  const name = `${prefix}_${process.pid}_${Math.random().toString(36).slice(2, 10)}`;
  await adminQuery(serverUrl, `CREATE DATABASE ${name}`);
  return { name, url: databaseUrl(serverUrl, name), remove: async () => void (await adminQuery(serverUrl, `DROP DATABASE IF EXISTS ${name} WITH (FORCE)`)) };
}
