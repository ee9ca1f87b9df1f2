export * from "./accounts";
export * from "./commerce";
export * from "./reports";
export * from "./sandbox";
export * from "./subusers";
export * from "./tools";
export * from "./usage";
export * from "./webhooks";
