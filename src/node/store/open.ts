// Choosing an engine from one location string, as `chrysalis serve` and embedding applications configure storage:
// a postgres:// URL, ":memory:", or a data directory. The engine's package (lmdb, pg) loads only when the store opens.
import type { NodeStore } from "./contract.js";
import { LmdbStore } from "./lmdb.js";
import { MemoryStore } from "./memory.js";
import { PostgresStore } from "./postgres.js";

/** What createStore passes to whichever engine the location names. */
export interface CreateStoreOptions {
  /** Solid entry points (ids that count as known parents). Default: the all-zero message id. */
  entryPoints?: string[];
}

/** True for a location that names a PostgreSQL database rather than a directory. */
export function isDatabaseUrl(location: string): boolean {
  return /^postgres(ql)?:\/\//i.test(location);
}

/** The store a location names: a PostgresStore for postgres:// URLs, a MemoryStore for ":memory:", else an LmdbStore. */
export function createStore(location: string, options: CreateStoreOptions = {}): NodeStore {
  if (location === ":memory:") return new MemoryStore(options);
  if (isDatabaseUrl(location)) return new PostgresStore({ connectionString: location, ...options });
  return new LmdbStore({ path: location, ...options });
}
