/**
 * What a run found and how it is shown: the result records, det_perf's lines, the summary table with jdet/baseline
 * ratios, the JSON report with every figure and its conditions, and the PNG plot.
 */
package io.jdet.perf.report;
