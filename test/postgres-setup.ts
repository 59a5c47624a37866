// Vitest global setup: finds the PostgreSQL server the storage tests use, once for the whole run. With
// CHRYSALIS_TEST_DATABASE_URL set (as .ci/run sets it) the server must answer, or the run fails; without it the default
// local server is tried, and when none answers the PostgreSQL tests are skipped with one printed line.
import pg from "pg";
import type { TestProject } from "vitest/node";

const DEFAULT_URL = "postgres://postgres@127.0.0.1:5432/test";

async function reachable(url: string): Promise<string | undefined> {
  const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: 3000 });
  try {
    await client.connect();
    await client.query("SELECT 1");
    return undefined;
  } catch (error) {
    return (error as Error).message || String(error);
  } finally {
    await client.end().catch(() => undefined);
  }
}

export default async function setup(project: TestProject): Promise<void> {
  const configured = process.env.CHRYSALIS_TEST_DATABASE_URL;
  const url = configured !== undefined && configured !== "" ? configured : DEFAULT_URL;
  const failure = await reachable(url);
  if (failure === undefined) {
    project.provide("postgresUrl", url);
    return;
  }
  if (url === configured) throw new Error(`CHRYSALIS_TEST_DATABASE_URL is set but its server does not answer: ${failure}`);
  console.log(`PostgreSQL tests skipped: no server at ${new URL(url).host} (${failure}); set CHRYSALIS_TEST_DATABASE_URL to run them`);
  project.provide("postgresUrl", "");
}
