export { channelCloses } from "../shared/channel-credentials";
export { RequestTailClient } from "./client";
export {
  ACK_EVERY,
  MAX_TAILS,
  MAX_UNACKED,
  TAIL_SUBPROTOCOL,
  type TailFilter,
  type TailRecord,
} from "./contract";
export { RequestTail } from "./request-tail";
