package io.clustermirror.bench;

import java.awt.Color;
import java.io.IOException;
import java.io.OutputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;
import org.knowm.xchart.BitmapEncoder;
import org.knowm.xchart.XYChart;
import org.knowm.xchart.XYChartBuilder;
import org.knowm.xchart.XYSeries;
import org.knowm.xchart.style.Styler;
import org.knowm.xchart.style.XYStyler;
import org.knowm.xchart.style.markers.SeriesMarkers;

/** The benchmarks' PNG charts (XChart), written beside the figures they print. */
final class BenchCharts {

    static final Path RESULTS = Path.of("bench", "results");

    private BenchCharts() {}

    /** One line per series: {@code series} maps a name to its x values and y values. */
    static void lines(Path png, String title, String xTitle, String yTitle, Map<String, double[][]> series)
            throws IOException {
        lines(png, title, xTitle, yTitle, series, false);
    }

    /** As {@link #lines(Path, String, String, String, Map)}, the y axis logarithmic when {@code logY}. */
    static void lines(
            Path png, String title, String xTitle, String yTitle, Map<String, double[][]> series, boolean logY)
            throws IOException {
        XYChart chart = new XYChartBuilder()
                .width(1000)
                .height(560)
                .title(title)
                .xAxisTitle(xTitle)
                .yAxisTitle(yTitle)
                .build();
        XYStyler styler = chart.getStyler();
        styler.setLegendPosition(Styler.LegendPosition.InsideSE);
        styler.setDefaultSeriesRenderStyle(XYSeries.XYSeriesRenderStyle.Line);
        styler.setYAxisLogarithmic(logY);
        styler.setChartBackgroundColor(Color.WHITE);
        series.forEach((name, xy) -> {
            if (xy[0].length > 0) {
                chart.addSeries(name, xy[0], xy[1]).setMarker(SeriesMarkers.NONE);
            }
        });
        write(chart, png);
    }

    private static void write(XYChart chart, Path png) throws IOException {
        Files.createDirectories(png.toAbsolutePath().getParent());
        try (OutputStream out = Files.newOutputStream(png)) {
            BitmapEncoder.saveBitmap(chart, out, BitmapEncoder.BitmapFormat.PNG);
        }
    }
}
