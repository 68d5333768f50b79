package io.clustermirror.cli;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.ObjectMapper;
import io.clustermirror.client.ApiClient;
import io.clustermirror.client.ApiException;
import java.io.IOException;
import java.net.ConnectException;
import java.net.http.HttpConnectTimeoutException;
import java.net.http.HttpHeaders;
import java.util.List;
import java.util.Map;
import javax.net.ssl.SSLHandshakeException;
import org.junit.jupiter.api.Test;

class FailureTest {

    private static final ObjectMapper JSON = ApiClient.createDefaultObjectMapper();
    private static final String URL = "http://localhost:8080";

    private static ApiException answer(int status, String body) {
        return new ApiException(
                status,
                "call failed",
                HttpHeaders.of(Map.of("Content-Type", List.of("application/problem+json")), (a, b) -> true),
                body);
    }

    @Test
    void aProblemShouldBeOneLineNamingItsErrorCodeAndStatus() {
        Failure failure = Failure.of(
                answer(
                        404,
                        "{\"type\":\"urn:cluster-mirror:problem:unknown-cluster-mirror\",\"title\":\"Unknown cluster"
                                + " mirror\",\"status\":404,\"detail\":\"Cluster mirror 'x' does not exist\","
                                + "\"instance\":\"/v1/mirrors/x\",\"errorCode\":\"UNKNOWN_CLUSTER_MIRROR\"}"),
                URL,
                JSON);

        assertThat(failure.line()).isEqualTo("Error: UNKNOWN_CLUSTER_MIRROR (404): Cluster mirror 'x' does not exist");
        assertThat(failure.exitCode()).isEqualTo(ExitCodes.REFUSED);
    }

    @Test
    void theFieldShouldBeNamedWhenTheDetailDoesNotAndLineBreaksFolded() {
        Failure failure = Failure.of(
                answer(
                        400,
                        "{\"status\":400,\"detail\":\"Unknown mirror config\\nlinger.ms\",\"errorCode\":"
                                + "\"INVALID_CONFIG\",\"field\":\"config.linger.ms\"}"),
                URL,
                JSON);

        assertThat(failure.line())
                .isEqualTo("Error: INVALID_CONFIG (400): Unknown mirror config linger.ms [field config.linger.ms]");
    }

    @Test
    void aPromoteThatRolledBackShouldNameTheLagOfItsFirstPartitions() {
        StringBuilder lag = new StringBuilder();
        for (int p = 0; p < 7; p++) {
            lag.append(p == 0 ? "" : ",")
                    .append("{\"topic\":\"orders\",\"partition\":")
                    .append(p)
                    .append(",\"lag\":")
                    .append(10 * p)
                    .append('}');
        }
        Failure failure = Failure.of(
                answer(
                        409,
                        "{\"detail\":\"not drained in 100 ms\",\"errorCode\":\"REQUEST_TIMED_OUT\",\"lag\":[" + lag
                                + "]}"),
                URL,
                JSON);

        assertThat(failure.line())
                .isEqualTo("Error: REQUEST_TIMED_OUT (409): not drained in 100 ms; lag orders-0 0, orders-1 10,"
                        + " orders-2 20, orders-3 30, orders-4 40, ...");
    }

    @Test
    void anErrorThatIsNoProblemShouldNameTheStatusAndTheStartOfItsBody() {
        Failure html = Failure.of(answer(502, "<html>\n<body>Bad gateway</body></html>"), URL, JSON);
        Failure empty = Failure.of(answer(413, ""), URL, JSON);
        Failure json = Failure.of(answer(500, "{\"message\":\"x\"}"), URL, JSON);
        Failure longBody = Failure.of(answer(500, "x".repeat(300)), URL, JSON);

        assertThat(html.line())
                .isEqualTo("Error: HTTP 502 from http://localhost:8080: <html> <body>Bad gateway</body></html>");
        assertThat(html.exitCode()).isEqualTo(ExitCodes.REFUSED);
        assertThat(empty.line()).isEqualTo("Error: HTTP 413 from http://localhost:8080 (no body)");
        assertThat(json.line()).isEqualTo("Error: HTTP 500 from http://localhost:8080: {\"message\":\"x\"}");
        assertThat(longBody.line()).endsWith(": " + "x".repeat(200) + "...");
    }

    @Test
    void noAnswerShouldSayWhatStoodInTheWayWithItsOwnExitCode() {
        Failure refused = Failure.of(new ApiException(new ConnectException()), URL, JSON);
        Failure tls = Failure.of(
                new ApiException(new IOException(new SSLHandshakeException("PKIX path building failed"))), URL, JSON);
        Failure slow =
                Failure.of(new ApiException(new HttpConnectTimeoutException("HTTP connect timed out")), URL, JSON);
        Failure other = Failure.of(new ApiException(new IOException("Connection reset")), URL, JSON);

        assertThat(refused.line()).isEqualTo("Error: cannot reach http://localhost:8080: connection refused");
        assertThat(refused.exitCode()).isEqualTo(ExitCodes.UNREACHABLE);
        assertThat(tls.line())
                .isEqualTo("Error: cannot reach http://localhost:8080: TLS failed: PKIX path building failed");
        assertThat(slow.line()).endsWith(": connect timed out");
        assertThat(other.line()).endsWith(": IOException: Connection reset");
        assertThat(other.exitCode()).isEqualTo(ExitCodes.UNREACHABLE);
    }
}
