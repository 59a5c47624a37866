// node:crypto where the platform has it (Node, Deno, Bun), undefined in browsers: the native fast paths' one door.
// Loaded through nodeBuiltin so that browser bundles neither resolve nor polyfill it.

export type NodeCrypto = typeof import("node:crypto");

/**
 * A Node built-in, by its name without the `node:` prefix. Not `import("node:…")`: browser bundlers would try to
 * resolve it. Not a specifier in a local constant either: `esbuild --minify` folds that back into a literal import.
 * getBuiltinModule (Node ≥ 20.16) is no import at all; older Node gets a specifier joined at run time, which no
 * minifier folds. Only call it where `process.versions.node` is set.
 */
export async function nodeBuiltin<T>(name: string): Promise<T> {
  const node = process as { getBuiltinModule?: (id: string) => unknown };
  if (typeof node.getBuiltinModule === "function") return node.getBuiltinModule(`node:${name}`) as T;
  const specifier = ["node", name].join(":");
  return (await import(/* webpackIgnore: true */ /* @vite-ignore */ specifier)) as T;
}

async function loadNodeCrypto(): Promise<NodeCrypto | undefined> {
  const isNode = typeof process === "object" && typeof process.versions === "object" && process.versions.node !== undefined;
  if (!isNode) return undefined;
  try {
    return await nodeBuiltin<NodeCrypto>("crypto");
  } catch {
    return undefined;
  }
}

export const nativeCrypto: NodeCrypto | undefined = await loadNodeCrypto();
