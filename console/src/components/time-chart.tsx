import { useEffect, useRef } from "preact/hooks";
import uPlot from "uplot";
import "uplot/dist/uPlot.min.css";

export interface ChartSeries {
  label: string;
  values: number[];
}

/** Colours that stay apart for readers with the common colour-vision deficiencies (Okabe–Ito). */
const PALETTE = ["#0072B2", "#E69F00", "#009E73", "#CC79A7", "#56B4E9", "#D55E00", "#F0E442", "#666666"];

/**
 * A time-series chart (uPlot on a canvas): `x` in epoch seconds, one line per series, or areas stacked on each
 * other when `stacked` (the legend and the cursor still show each series' own value). Width follows the container.
 */
export function TimeChart(props: {
  title: string;
  x: number[];
  series: ChartSeries[];
  stacked?: boolean;
  format: (value: number) => string;
}) {
  const box = useRef<HTMLDivElement>(null);
  useEffect(() => {
    const element = box.current;
    if (!element) return;
    const { x, series, stacked, format } = props;
    const shown = stacked ? stack(series) : series.map((one) => one.values);
    const options: uPlot.Options = {
      width: Math.max(280, element.clientWidth),
      height: 220,
      legend: { live: true },
      // Stacked: each area fills down to the next series' line only (the last one to the axis).
      bands: stacked
        ? series.slice(1).map((_one, index) => ({ series: [index + 1, index + 2] as [number, number] }))
        : [],
      cursor: { drag: { x: false, y: false } },
      scales: { x: { time: true } },
      // UTC, like every time the API and the console show.
      tzDate: (seconds) => uPlot.tzDate(new Date(seconds * 1000), "Etc/UTC"),
      axes: [{ stroke: "#444" }, { stroke: "#444", size: 70, values: (_chart, ticks) => ticks.map(format) }],
      series: [
        {
          label: "Time",
          value: (_chart, value) =>
            value == null ? "—" : new Date(value * 1000).toISOString().slice(0, 16).replace("T", " "),
        },
        ...series.map((one, index) => ({
          label: one.label,
          stroke: PALETTE[index % PALETTE.length],
          fill: stacked ? `${PALETTE[index % PALETTE.length]}99` : undefined,
          width: 1.5,
          value: (_chart: uPlot, _value: number | null, _series: number, point: number | null) =>
            point == null ? "—" : format(one.values[point] ?? 0),
        })),
      ],
    };
    const chart = new uPlot(options, [x, ...shown], element);
    const resize = new ResizeObserver(() => chart.setSize({ width: Math.max(280, element.clientWidth), height: 220 }));
    resize.observe(element);
    return () => {
      resize.disconnect();
      chart.destroy();
    };
  }, [props.x, props.series, props.stacked, props.format]);
  return (
    <figure class="chart">
      <figcaption>{props.title}</figcaption>
      <div ref={box} role="img" aria-label={`${props.title}: ${summary(props.series, props.format)}`} />
    </figure>
  );
}

/** Running sums from the last series down, so each area sits on the ones after it and the first is on top. */
function stack(series: ChartSeries[]): number[][] {
  const sums: number[][] = [];
  let below: number[] | null = null;
  for (let index = series.length - 1; index >= 0; index--) {
    const values = series[index]!.values;
    const summed: number[] = values.map((value, point) => value + (below?.[point] ?? 0));
    sums.unshift(summed);
    below = summed;
  }
  return sums;
}

function summary(series: ChartSeries[], format: (value: number) => string): string {
  return series
    .map((one) => `${one.label} ${format(one.values.reduce((sum, value) => sum + value, 0))} in all`)
    .join("; ");
}
