export * from "./accounts";
export * from "./subusers";
