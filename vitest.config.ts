import path from "node:path";
import { cloudflareTest, readD1Migrations } from "@cloudflare/vitest-plugin";
import { defineConfig } from "vitest/config";
import { outboundService } from "./test/outbound";

export default defineConfig(async () => {
  const migrations = await readD1Migrations(path.join(import.meta.dirname, "migrations"));
  return {
    plugins: [
      cloudflareTest({
        wrangler: { configPath: "./wrangler.toml" },
        miniflare: {
          bindings: {
            TEST_MIGRATIONS: migrations,
            LOG_REQUESTS: "false",
            ADMIN_TOKEN: "test-admin-token",
            GATEWAY_TOKEN: "test-gateway-token",
            SEALING_KEY: "q7mJ1l1hW8bQ0ZC8l3n9o6Ykq3hZb8i1bWqkq4m7b2Y=",
          },
          // No test may reach the network: every outbound request is answered by a fake or refused (test/outbound).
          outboundService,
        },
      }),
    ],
    test: {
      setupFiles: ["./test/helpers/setup.ts"],
      include: ["test/**/*.test.ts"],
    },
  };
});
