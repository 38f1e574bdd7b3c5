/**
 * A small parser of the Prometheus text exposition format (prom-client has none): `# TYPE` lines
 * and samples `name{label="value",…} number`. Anything else that is not a comment fails the parse.
 */
export interface Sample {
  name: string;
  labels: Record<string, string>;
  value: number;
}

export interface ParsedMetrics {
  types: Map<string, string>;
  samples: Sample[];
}

const SAMPLE = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})?\s+(\S+)(?:\s+\d+)?$/;
const LABEL = /([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"\s*,?\s*/gy;

const parseLabels = (text: string, line: string): Record<string, string> => {
  const labels: Record<string, string> = {};
  LABEL.lastIndex = 0;
  let consumed = 0;
  for (let m = LABEL.exec(text); m; m = LABEL.exec(text)) {
    labels[m[1] ?? ''] = (m[2] ?? '').replace(/\\"/g, '"').replace(/\\n/g, '\n').replace(/\\\\/g, '\\');
    consumed = LABEL.lastIndex;
  }
  if (consumed !== text.length) throw new Error(`bad labels in: ${line}`);
  return labels;
};

export const parsePrometheusText = (text: string): ParsedMetrics => {
  const types = new Map<string, string>();
  const samples: Sample[] = [];
  for (const line of text.split('\n')) {
    if (line.trim() === '') continue;
    if (line.startsWith('# TYPE ')) {
      const [name, type] = line.slice(7).split(' ');
      if (!name || !type || !/^(counter|gauge|histogram|summary|untyped)$/.test(type))
        throw new Error(`bad TYPE: ${line}`);
      types.set(name, type);
      continue;
    }
    if (line.startsWith('#')) continue;
    const match = SAMPLE.exec(line);
    const value = match?.[3] === '+Inf' ? Infinity : Number(match?.[3]);
    if (!match?.[1] || Number.isNaN(value)) throw new Error(`not a sample: ${line}`);
    samples.push({ name: match[1], labels: match[2] ? parseLabels(match[2], line) : {}, value });
  }
  return { types, samples };
};

/** The value of the one sample named `name` whose labels include `labels`; undefined when absent. */
export const sampleValue = (
  parsed: ParsedMetrics,
  name: string,
  labels: Record<string, string> = {},
): number | undefined => {
  const matching = parsed.samples.filter(
    (s) => s.name === name && Object.entries(labels).every(([k, v]) => s.labels[k] === v),
  );
  if (matching.length > 1) throw new Error(`${matching.length} samples of ${name} match ${JSON.stringify(labels)}`);
  return matching[0]?.value;
};
