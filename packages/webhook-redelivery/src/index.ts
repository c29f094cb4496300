export { requestRedelivery, type RedeliveryDeps, type RedeliveryRequest } from "./request-redelivery.ts";
