/** The renderers of plans, diagnostics and apply reports. */
export { renderApplyReport } from './apply.js';
export { locationOf, renderDiagnostics, sortDiagnostics } from './diagnostics.js';
export { renderPlanJson } from './json.js';
export { MARKDOWN_LIMIT, type MarkdownPlanOptions, renderPlanMarkdown } from './markdown.js';
export { planSteps, type ShownChange } from './steps.js';
export { inventoryLine, renderPlanText, summaryLine, type TextOptions } from './text.js';
