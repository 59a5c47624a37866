// What the search field takes: a milestone index, an output id, a Bech32 address, or 64 hex characters (a message id, a
// transaction id or an Ed25519 address: which one is found by asking the node, in that order).

export type SearchTarget = { route: string } | { hex64: string } | { error: string };

const BECH32 = /^[a-z0-9]{1,83}1[02-9ac-hj-np-z]{6,}$/;

export function classify(input: string): SearchTarget {
  let text = input.trim();
  // Pasted deep links and prefixed hex are taken as what they name.
  const deep = /#\/(message|transaction|output|address|milestone)\/([^/?#\s]+)$/.exec(text);
  if (deep !== null) return { route: `${deep[1]}/${deep[2]}` };
  if (/^0x[0-9a-fA-F]+$/.test(text)) text = text.slice(2);
  if (/^\d{1,10}$/.test(text)) {
    const index = Number(text);
    return index >= 1 && index <= 0xffffffff ? { route: `milestone/${index}` } : { error: "a milestone index is 1 .. 4294967295" };
  }
  if (/^[0-9a-fA-F]{68}$/.test(text)) return { route: `output/${text.toLowerCase()}` };
  if (/^[0-9a-fA-F]{64}$/.test(text)) return { hex64: text.toLowerCase() };
  if (BECH32.test(text.toLowerCase()) && (text === text.toLowerCase() || text === text.toUpperCase())) return { route: `address/${text.toLowerCase()}` };
  return { error: "enter a message id, transaction id, output id, address (Bech32 or Ed25519 hex) or milestone index" };
}
