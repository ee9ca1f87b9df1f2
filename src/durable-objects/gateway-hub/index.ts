export { GatewayHubClient } from "./client";
export { GatewayHub } from "./gateway-hub";
export { gatewaySlots } from "./slots";
