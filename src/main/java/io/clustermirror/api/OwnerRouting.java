package io.clustermirror.api;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.clustermirror.coordinator.ServiceInstance;
import io.clustermirror.coordinator.StateOwnership;
import io.clustermirror.metrics.MirrorMetrics;
import io.clustermirror.mirror.MirrorError;
import io.vertx.core.Future;
import io.vertx.core.MultiMap;
import io.vertx.core.Vertx;
import io.vertx.core.buffer.Buffer;
import io.vertx.core.http.HttpClient;
import io.vertx.core.http.HttpClientOptions;
import io.vertx.core.http.HttpClientResponse;
import io.vertx.core.http.HttpMethod;
import io.vertx.core.http.HttpServerRequest;
import io.vertx.core.http.RequestOptions;
import io.vertx.ext.web.Router;
import io.vertx.ext.web.RoutingContext;
import jakarta.enterprise.context.ApplicationScoped;
import jakarta.enterprise.event.Observes;
import java.net.URLDecoder;
import java.nio.charset.StandardCharsets;
import java.util.Locale;
import java.util.Optional;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Any instance answers any request (decisions §48): a request about a mirror is applied by the instance that owns the
 * mirror's state partition, so another instance forwards it there over HTTP, as it came (method, path, query, headers
 * with the caller's credentials, body), and answers with the owner's answer, status and body unchanged (a 404 stays a
 * 404). The owner authenticates, authorizes and audits it, once; the forwarding instance only routes. A forwarded
 * request carries {@value #FORWARDED_BY}, and is never forwarded again: an instance that no longer owns the mirror when
 * it arrives answers 503. While no one owns the partition (the group is moving it), or the owner does not answer, the
 * answer is 503 problem+json {@code COORDINATOR_NOT_AVAILABLE} with {@code Retry-After}, never a 500.
 *
 * <p>Routed here: every path under {@code /v1/mirrors/{name}}, and writes of {@code /v1/config/{key}} (to the owner of
 * the service settings' partition). A create names its mirror in its body, so {@link MirrorResource} forwards it
 * ({@link #forward(io.vertx.core.http.HttpServerRequest, StateOwnership.Owner, Buffer)}); the list gathers every
 * member's mirrors.
 */
@ApplicationScoped
public class OwnerRouting {

    /** The header a forwarded request carries: the id of the instance that forwarded it. */
    public static final String FORWARDED_BY = "Cluster-Mirror-Forwarded-By";

    private static final Pattern MIRROR_PATH = Pattern.compile("^/v1/mirrors/([^/:]+)(?:[/:].*)?$");
    private static final Set<String> HOP_BY_HOP = Set.of(
            "connection",
            "keep-alive",
            "proxy-authenticate",
            "proxy-authorization",
            "te",
            "trailer",
            "transfer-encoding",
            "upgrade",
            "host",
            "content-length");
    private static final int FORWARD_TIMEOUT_MS = 60_000;

    private final ServiceInstance instance;
    private final ObjectMapper json;
    private final MirrorMetrics metrics;
    private HttpClient client;

    public OwnerRouting(ServiceInstance instance, ObjectMapper json, MirrorMetrics metrics) {
        this.instance = instance;
        this.json = json;
        this.metrics = metrics;
    }

    void install(@Observes Router router, Vertx vertx) {
        client = vertx.createHttpClient(new HttpClientOptions()
                .setConnectTimeout(5_000)
                .setTrustAll(false)
                .setVerifyHost(true));
        router.route("/v1/*").order(Integer.MIN_VALUE + 1).handler(this::route);
    }

    private void route(RoutingContext context) {
        var request = context.request();
        if (request.getHeader(FORWARDED_BY) != null) {
            context.next(); // forwarded once: applied here, or refused by the coordinator if this one no longer owns it
            return;
        }
        String path = context.normalizedPath();
        Optional<String> mirror = mirrorOf(path);
        boolean serviceConfigWrite = path.startsWith("/v1/config/") && request.method() != HttpMethod.GET;
        if (mirror.isEmpty() && !serviceConfigWrite) {
            context.next();
            return;
        }
        Optional<StateOwnership.Owner> owner =
                mirror.isPresent() ? instance.ownerOf(mirror.get()) : instance.ownerOfServiceConfigs();
        if (owner.isPresent() && owner.get().id().equals(instance.id())) {
            context.next();
            return;
        }
        if (owner.isEmpty()) {
            unavailable(
                    context,
                    "No instance owns "
                            + (mirror.isPresent() ? "mirror '" + mirror.get() + "'" : "the service settings")
                            + " right now (the state group is assigning it); retry");
            return;
        }
        body(request)
                .compose(body -> forward(request, owner.get(), body))
                .onSuccess(answer -> answer(context, answer))
                .onFailure(e -> unavailable(
                        context,
                        "The instance that owns it, " + owner.get().id() + " at "
                                + owner.get().url() + ", did not answer: " + e.getMessage()));
    }

    /**
     * The request's body, read here (the router holds the request paused until a handler reads it); none for a
     * request that declares none.
     */
    private static Future<Buffer> body(HttpServerRequest request) {
        String length = request.getHeader("Content-Length");
        boolean chunked = "chunked".equalsIgnoreCase(request.getHeader("Transfer-Encoding"));
        if (!chunked && (length == null || "0".equals(length.strip()))) {
            return Future.succeededFuture(Buffer.buffer());
        }
        Future<Buffer> body = request.body();
        request.resume();
        return body;
    }

    /** The owner's answer: status, headers and body. */
    public record Answer(int status, MultiMap headers, Buffer body) {}

    /** Sends the request to the owner, as it came, with {@value #FORWARDED_BY}. */
    public Future<Answer> forward(HttpServerRequest request, StateOwnership.Owner owner, Buffer body) {
        metrics.forwarded();
        RequestOptions options = new RequestOptions()
                .setMethod(request.method())
                .setAbsoluteURI(owner.url() + request.uri())
                .setIdleTimeout(FORWARD_TIMEOUT_MS);
        MultiMap headers = MultiMap.caseInsensitiveMultiMap();
        request.headers().forEach(h -> {
            if (!HOP_BY_HOP.contains(h.getKey().toLowerCase(Locale.ROOT))) {
                headers.add(h.getKey(), h.getValue());
            }
        });
        headers.set(FORWARDED_BY, instance.id());
        options.setHeaders(headers);
        return client.request(options)
                .compose(out -> out.send(body))
                .compose(response -> response.body().map(b -> answerOf(response, b)));
    }

    private static Answer answerOf(HttpClientResponse response, Buffer body) {
        MultiMap headers = MultiMap.caseInsensitiveMultiMap();
        response.headers().forEach(h -> {
            if (!HOP_BY_HOP.contains(h.getKey().toLowerCase(Locale.ROOT))) {
                headers.add(h.getKey(), h.getValue());
            }
        });
        return new Answer(response.statusCode(), headers, body);
    }

    private static void answer(RoutingContext context, Answer answer) {
        var response = context.response().setStatusCode(answer.status());
        response.headers().addAll(answer.headers());
        response.end(answer.body());
    }

    private void unavailable(RoutingContext context, String detail) {
        metrics.apiError(MirrorError.COORDINATOR_NOT_AVAILABLE);
        Problem problem = Problem.of(MirrorError.COORDINATOR_NOT_AVAILABLE, detail, context.normalizedPath(), null);
        String body;
        try {
            body = json.writeValueAsString(problem);
        } catch (JsonProcessingException e) {
            throw new IllegalStateException(e);
        }
        context.response()
                .setStatusCode(503)
                .putHeader("Content-Type", Problem.MEDIA_TYPE)
                .putHeader("Retry-After", String.valueOf(ProblemMapper.RETRY_AFTER_SECONDS))
                .end(body);
    }

    /** The mirror a path is about, if it names one. */
    static Optional<String> mirrorOf(String path) {
        Matcher m = MIRROR_PATH.matcher(path);
        return m.matches() ? Optional.of(URLDecoder.decode(m.group(1), StandardCharsets.UTF_8)) : Optional.empty();
    }
}
