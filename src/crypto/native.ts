// node:crypto where the platform has it (Node, Deno, Bun), undefined in browsers: the native fast paths' one door.
// Imported through a variable specifier so that browser bundles neither resolve nor polyfill it.

export type NodeCrypto = typeof import("node:crypto");

async function loadNodeCrypto(): Promise<NodeCrypto | undefined> {
  const isNode = typeof process === "object" && typeof process.versions === "object" && process.versions.node !== undefined;
  if (!isNode) return undefined;
  try {
    const specifier = "node:crypto";
    return (await import(/* @vite-ignore */ /* webpackIgnore: true */ specifier)) as NodeCrypto;
  } catch {
    return undefined;
  }
}

export const nativeCrypto: NodeCrypto | undefined = await loadNodeCrypto();
