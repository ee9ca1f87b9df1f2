export * from "./accounts";
export * from "./commerce";
export * from "./subusers";
export * from "./usage";
