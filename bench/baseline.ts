// Another build of this library (`CHRYSALIS_BASELINE=<its dist directory>`), so that a suite can measure the code before
// and after a change side by side in one run: `bench/build-baseline.sh <commit>` builds one and prints the variable.
import { pathToFileURL } from "node:url";

/** The few entry points the codec and JSON suites compare. */
export interface Baseline {
  encodeMessage(message: unknown): Uint8Array;
  decodeMessage(bytes: Uint8Array): unknown;
  messageFromJson(json: unknown): unknown;
  /** Absent from builds before the one-pass JSON reader. */
  messageFromJsonWithBytes?(json: unknown): { bytes: Uint8Array };
  /** Absent from builds before the JSON text reader. */
  messageFromJsonTextWithBytes?(text: string): { bytes: Uint8Array };
  messageId(messageOrBytes: unknown): string;
}

export const baselineDir = process.env["CHRYSALIS_BASELINE"];

export async function loadBaseline(): Promise<Baseline | undefined> {
  if (baselineDir === undefined || baselineDir === "") return undefined;
  return (await import(pathToFileURL(`${baselineDir}/index.js`).href)) as Baseline;
}
