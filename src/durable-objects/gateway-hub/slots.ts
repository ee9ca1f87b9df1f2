/** The fleet's node slots (`GATEWAY_SLOTS`): each connected node holds one, and standing shares split by them. */
export function gatewaySlots(env: Cloudflare.Env): number {
  const slots = Number(env.GATEWAY_SLOTS);
  return Number.isInteger(slots) && slots >= 1 && slots <= 1024 ? slots : 64;
}
