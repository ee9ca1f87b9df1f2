/** The tag of every test helper; each is declared `sandboxOnly` (a live key gets 403 `sandbox_key_required`). */
export const tags = ["Test helpers"];
