// Where WebAssembly cannot run (a page whose Content-Security-Policy lacks 'wasm-unsafe-eval', `node --jitless`),
// hashing and PoW carry on in JavaScript, slower; this tells the application so, once per component, as an event.
//
// Told on first use of the fallback and a task later, so that a listener added right after the import still hears
// it. Nobody listening, or no listener calling preventDefault(), leaves a console warning (process.emitWarning in Node).

/** What fell back: BLAKE2b-256 (ids, addresses, PoW digests) or the PoW kernel (mining, scores). */
export type FallbackComponent = "blake2b" | "pow";

/** The event `warnings` dispatches, type "warning". */
export class ChrysalisWarningEvent extends Event {
  /** A stable code: WASM_UNAVAILABLE (WebAssembly failed to compile or is absent; JavaScript runs instead). */
  readonly code: "WASM_UNAVAILABLE";
  /** What fell back to JavaScript. */
  readonly component: FallbackComponent;
  /** A sentence saying what fell back and what it costs. */
  readonly message: string;
  /** What the engine threw (a CompileError naming the CSP directive, in browsers), if anything. */
  readonly cause: unknown;

  constructor(component: FallbackComponent, message: string, cause: unknown) {
    super("warning", { cancelable: true });
    this.code = "WASM_UNAVAILABLE";
    this.component = component;
    this.message = message;
    this.cause = cause;
  }
}

/** Listen with `warnings.addEventListener("warning", (event) => …)`; `event` is a ChrysalisWarningEvent. */
export const warnings: EventTarget = new EventTarget();

const told = new Set<FallbackComponent>();

/** Says once per component that it runs on its JavaScript fallback. */
export function warnFallback(component: FallbackComponent, message: string, cause?: unknown): void {
  if (told.has(component)) return;
  told.add(component);
  setTimeout(() => {
    const event = new ChrysalisWarningEvent(component, message, cause);
    warnings.dispatchEvent(event);
    if (event.defaultPrevented) return;
    const node = globalThis.process as { emitWarning?: (message: string, options: { code: string }) => void } | undefined;
    if (typeof node?.emitWarning === "function") node.emitWarning(`chrysalis-core: ${message}`, { code: "CHRYSALIS_WASM_UNAVAILABLE" });
    else console.warn(`chrysalis-core: ${message}`, cause);
  }, 0);
}
