// Names for the public error codes, so code reads `Err.InsufficientCredits`, not 30001.
// The numbers are the contract (docs/api.md#error-codes); the catalogs below key on these names.
export const Err = {
  MissingAuthorization: 10001,
  NotBearer: 10002,
  KeyInvalid: 10003,
  KeyRevoked: 10004,
  SignInRequired: 10005,
  OriginNotAllowed: 10006,
  BodyNotObject: 20001,
  ParameterMissing: 20002,
  ParameterInvalid: 20003,
  ModelNotSupported: 20004,
  SizeNotSupported: 20005,
  QualityNotSupported: 20006,
  PromptTooLong: 20007,
  BodyTooLarge: 20008,
  InsufficientCredits: 30001,
  PricingUnknown: 30002,
  TaskNotFound: 40001,
  RouteNotFound: 40002,
  RateLimited: 50001,
  PersistFailed: 60001,
  WorkflowStartFailed: 60002,
  Internal: 60099,
  WorkflowUnavailable: 70001,
  DatabaseUnavailable: 70002,
} as const;

/** Codes a failed task carries (docs/api.md#workflow-codes). */
export const Wf = {
  UpstreamSubmitFailed: 80001,
  PollingTimeout: 80002,
  UpstreamFailed: 80003,
  NoOutput: 80004,
  StorageFailed: 80005,
  ContentPolicy: 80006,
  InputRejected: 80007,
  Canceled: 80008,
  BillingUnverified: 80009,
} as const;
