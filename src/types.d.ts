declare module "blake2b-wasm/blake2b.js" {
  const load: (imports?: object) => Promise<unknown>;
  export default load;
}
