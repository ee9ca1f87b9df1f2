import path from "node:path";
import { cloudflareTest, readD1Migrations } from "@cloudflare/vitest-plugin";
import { defineConfig } from "vitest/config";
import { unstable_readConfig } from "wrangler";
import { outboundService } from "./test/outbound";
import { cloudTestBindings } from "./test/outbound/cloud";
import { startFakeGateway } from "./test/tools/fake-gateway";

export default defineConfig(async () => {
  const migrations = await readD1Migrations(path.join(import.meta.dirname, "migrations"));
  // The proxy test's gateway: the local gateway's protocol code with a stubbed API, on a free loopback port.
  const proxyGateway = await startFakeGateway();
  // Queues deliver at once in tests, whatever batch window production gives them (usage: 55 s).
  const consumers = unstable_readConfig({ config: path.join(import.meta.dirname, "wrangler.toml") }, {}).queues
    .consumers;
  const queueConsumers = Object.fromEntries(
    consumers.map((consumer: { queue: string }) => [consumer.queue, { maxBatchTimeout: 0 }]),
  );
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
            PASSWORD_PEPPER: "2:test-pepper-0123456789abcdefghij",
            // A rotated pepper, still verifying the hashes made with it (test/routes/members).
            PASSWORD_PEPPER_PREVIOUS: "1:test-previous-pepper-0123456789",
            // Members' mail stays in the outbox, where tests read invitations and resets.
            MAIL_OUTBOX: "on",
            // Production URL rules in tests, whatever a developer's .dev.vars allows (test/webhooks).
            WEBHOOK_ALLOW_LOCAL_HTTP: "false",
            GATEWAY_HOST: "127.0.0.1",
            GATEWAY_PORT: String(proxyGateway.port),
            // Four gateway node slots: a test's nodes each get one, and split limits as standing shares.
            GATEWAY_SLOTS: "4",
            PROXY_TEST_TIMEOUT_MS: "1500",
            TEST_PROXY_TARGET: proxyGateway.targetUrl,
            // Report destinations: our cloud identities and endpoints, pointed at the fakes of test/outbound/cloud.ts.
            ...cloudTestBindings,
          },
          queueConsumers,
          // No test may reach the network: every outbound request is answered by a fake or refused (test/outbound).
          outboundService,
        },
      }),
    ],
    test: {
      setupFiles: ["./test/helpers/setup.ts"],
      // `npm test` runs the suite beside the console's browser and the fleet simulation on the same cores, so a test
      // may take several times its quiet time. A test that times out keeps running in the shared runtime (its clock
      // moves could reach the next test), so the limit is set well above the slowest test's loaded time.
      testTimeout: 30_000,
      hookTimeout: 30_000,
      projects: [
        // Most files share one runtime (module graph, storage): a fresh runtime per file cost about 5 s each, most
        // of the suite's time. Every file makes its own accounts and keys, so none sees another's.
        {
          extends: true as const,
          test: { name: "shared", isolate: false, include: ["test/**/*.test.ts"], exclude: WHOLE_RUNTIME_FILES },
        },
        { extends: true as const, test: { name: "own-runtime", isolate: true, include: WHOLE_RUNTIME_FILES } },
      ],
    },
  };
});

/**
 * Files that need a runtime of their own: they stub the runtime's bindings (the mail binding) or assert on what the
 * whole database holds after a cron run (retention deletes everything older than a date, audit filters by time; the
 * balance watch takes the stalest accounts of the whole database).
 */
const WHOLE_RUNTIME_FILES = [
  "test/reports/destinations.test.ts",
  "test/reports/links.test.ts",
  "test/routes/audit-log.test.ts",
  "test/routes/balance-low.test.ts",
  "test/routes/gateway.test.ts",
  "test/tools/proxy-test.test.ts",
  "test/webhooks/retention.test.ts",
];
