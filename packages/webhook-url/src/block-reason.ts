/** Why an IPv4 address (alone or embedded in IPv6) is not a public destination. */
export type Ipv4BlockReason =
  "unspecified" | "loopback" | "private" | "linkLocal" | "carrierGradeNat" | "multicast" | "broadcast" | "reserved" | "cloudMetadata";

/** IPv6 forms that carry an IPv4 address; the reason then reads `<form>:<IPv4 reason>`. */
export type EmbeddingForm = "ipv4Mapped" | "ipv4Compatible" | "ipv4Translated" | "nat64" | "6to4";

export type Ipv6BlockReason =
  | "unspecified"
  | "loopback"
  | "linkLocal"
  | "uniqueLocal"
  | "siteLocal"
  | "multicast"
  | "discard"
  | "reserved"
  | "cloudMetadata"
  | "teredo"
  | "nat64Local"
  | "ipv4Compatible"
  | "ipv4Translated"
  | `${EmbeddingForm}:${Ipv4BlockReason}`;

/** Names the range that blocked an address; `invalid` when the input is not an IP address. */
export type BlockReason = Ipv4BlockReason | Ipv6BlockReason | "invalid";
