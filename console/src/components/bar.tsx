/** A used/left bar: amber past 80%, red when full. */
export function Bar(props: { label: string; used: number; total: number; text: string }) {
  const fraction = props.total > 0 ? Math.min(1, props.used / props.total) : props.used > 0 ? 1 : 0;
  const tone = fraction >= 1 ? "full" : fraction >= 0.8 ? "high" : "ok";
  return (
    <div class="bar-block">
      <div class="bar-label">
        <span>{props.label}</span>
        <span>{props.text}</span>
      </div>
      {/* biome-ignore lint/a11y/useSemanticElements: a styled bar (<meter> cannot be styled alike across browsers). */}
      <div
        class={`bar ${tone}`}
        role="meter"
        aria-label={props.label}
        aria-valuemin={0}
        aria-valuemax={100}
        aria-valuenow={Math.round(fraction * 100)}
        aria-valuetext={props.text}
      >
        <span style={{ width: `${fraction * 100}%` }} />
      </div>
    </div>
  );
}
