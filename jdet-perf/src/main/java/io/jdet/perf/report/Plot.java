package io.jdet.perf.report;

import io.jdet.perf.PerfException;
import io.jdet.perf.TestKind;
import org.knowm.xchart.BitmapEncoder;
import org.knowm.xchart.XYChart;
import org.knowm.xchart.XYChartBuilder;
import org.knowm.xchart.XYSeries;
import org.knowm.xchart.style.Styler;
import org.knowm.xchart.style.markers.SeriesMarkers;

import javax.imageio.ImageIO;
import java.awt.Color;
import java.awt.Graphics2D;
import java.awt.image.BufferedImage;
import java.io.IOException;
import java.nio.file.Path;
import java.util.List;
import java.util.function.ToDoubleFunction;
import java.util.stream.Stream;

/**
 * The PNG plot: median one-way latency and bandwidth against message size, on log-log axes, jdet's tests drawn
 * solid beside the baselines drawn dashed. Rendered headless with XChart, two charts side by side in one image.
 */
public final class Plot {
    /** Width of each chart in pixels. */
    public static final int CHART_WIDTH = 760;
    /** Height of the image in pixels. */
    public static final int HEIGHT = 560;

    private Plot() {
    }

    /**
     * Draws the plot.
     *
     * @param results the run's figures
     * @param file    where to write the PNG
     * @throws PerfException if it cannot be drawn or written
     */
    public static void write(final Results results, final Path file) {
        try {
            final List<BufferedImage> panels = Stream.of(latencyChart(results), bandwidthChart(results))
                .filter(chart -> !chart.getSeriesMap().isEmpty()).map(BitmapEncoder::getBufferedImage).toList();
            if (panels.isEmpty()) {
                throw new PerfException("nothing to plot: no figure was measured");
            }
            final BufferedImage image = new BufferedImage(panels.stream().mapToInt(BufferedImage::getWidth).sum(),
                HEIGHT, BufferedImage.TYPE_INT_RGB);
            final Graphics2D g = image.createGraphics();
            try {
                g.setColor(Color.WHITE);
                g.fillRect(0, 0, image.getWidth(), image.getHeight());
                int x = 0;
                for (final BufferedImage panel : panels) {
                    g.drawImage(panel, x, 0, null);
                    x += panel.getWidth();
                }
            } finally {
                g.dispose();
            }
            if (!ImageIO.write(image, "png", file.toFile())) {
                throw new PerfException("no PNG writer in this JVM");
            }
        } catch (final IOException | RuntimeException e) {
            throw e instanceof PerfException p ? p : new PerfException("cannot draw " + file + ": " + e, e);
        }
    }

    private static XYChart latencyChart(final Results results) {
        final XYChart chart = chart("One-way latency (median) vs message size", "one-way latency (us)");
        for (final TestKind kind : TestKind.values()) {
            if (kind.latency()) {
                final List<LatencyResult> series = results.latencies().stream().filter(r -> r.kind() == kind)
                    .toList();
                add(chart, kind, series, r -> r.size(), r -> r.percentileUs(50), results.info().jdetTransport());
            }
        }
        return chart;
    }

    private static XYChart bandwidthChart(final Results results) {
        final XYChart chart = chart("Bandwidth vs message size", "MB/s");
        for (final TestKind kind : TestKind.values()) {
            if (!kind.latency() && !kind.fixedSize()) {
                final List<BandwidthResult> series = results.bandwidths().stream().filter(r -> r.kind() == kind)
                    .toList();
                add(chart, kind, series, r -> r.size(), BandwidthResult::mbPerSec, results.info().jdetTransport());
            }
        }
        return chart;
    }

    private static XYChart chart(final String title, final String yTitle) {
        final XYChart chart = new XYChartBuilder().width(CHART_WIDTH).height(HEIGHT).title(title)
            .xAxisTitle("message size (bytes)").yAxisTitle(yTitle).build();
        final var styler = chart.getStyler();
        styler.setXAxisLogarithmic(true);
        styler.setYAxisLogarithmic(true);
        styler.setLegendPosition(Styler.LegendPosition.InsideNW);
        styler.setChartBackgroundColor(Color.WHITE);
        styler.setPlotGridLinesVisible(true);
        styler.setMarkerSize(7);
        styler.setXAxisDecimalPattern("#,###");
        return chart;
    }

    private static <T> void add(final XYChart chart, final TestKind kind, final List<T> points,
                                final ToDoubleFunction<T> x, final ToDoubleFunction<T> y, final String jdet) {
        final double[] xs = points.stream().mapToDouble(x).toArray();
        final double[] ys = points.stream().mapToDouble(y).map(v -> Math.max(v, 1e-3)).toArray();
        if (xs.length == 0) {
            return;
        }
        final String name = kind.jdet() ? kind.label() + " (" + jdet + ")" : kind.label() + " (baseline)";
        final XYSeries series = chart.addSeries(name, xs, ys);
        series.setMarker(kind.jdet() ? SeriesMarkers.CIRCLE : SeriesMarkers.DIAMOND);
        if (!kind.jdet()) {
            series.setLineStyle(new java.awt.BasicStroke(1.5f, java.awt.BasicStroke.CAP_BUTT,
                java.awt.BasicStroke.JOIN_MITER, 10f, new float[] {6f, 4f}, 0f));
        }
    }
}
