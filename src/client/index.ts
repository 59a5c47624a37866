// chrysalis-core/client: a typed fetch-based client for a Chrysalis node and the prove-ownership service.
// Runs in Node ≥ 20 and browsers; local PoW uses chrysalis-core/pow's workers.
export {
  createClient,
  ClientError,
  type ClientErrorCode,
  type ChrysalisClient,
  type ClientOptions,
  type ClientNodeInfo,
  type ClientMessageMetadata,
  type ClientOutput,
  type ClientAddressBalance,
  type ClientAddressOutputs,
  type ClientMilestone,
  type ClientUtxoChanges,
  type SubmitMessageOptions,
  type SubmittableMessage,
} from "./client.js";
