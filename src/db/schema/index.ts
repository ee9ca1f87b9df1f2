export * from "./accounts";
export * from "./commerce";
export * from "./subusers";
