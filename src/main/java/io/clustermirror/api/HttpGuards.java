package io.clustermirror.api;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.clustermirror.metrics.MirrorMetrics;
import io.clustermirror.mirror.MirrorError;
import io.vertx.core.http.HttpHeaders;
import io.vertx.core.http.HttpMethod;
import io.vertx.core.http.HttpVersion;
import io.vertx.ext.web.Router;
import io.vertx.ext.web.RoutingContext;
import jakarta.enterprise.context.ApplicationScoped;
import jakarta.enterprise.event.Observes;
import jakarta.ws.rs.Path;
import java.lang.reflect.Method;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.regex.Pattern;

/**
 * What the HTTP layer answers before any resource runs, each as problem+json (status, errorCode
 * {@code INVALID_REQUEST}, and the header the status calls for):
 * <ul>
 * <li>request line or headers over the service's limits: 414, 431 (Vert.x's own decoder answers only past
 * {@code quarkus.http.limits.*}, which are set far above these, with an empty body);</li>
 * <li>a body over {@link #MAX_BODY_BYTES} by its Content-Length: 413 (a chunked body is counted by {@link RequestBodies});</li>
 * <li>a body that is not {@code application/json}, or has no Content-Type: 415, so that a browser cannot send a
 * cross-site "simple" request without a CORS preflight;</li>
 * <li>the methods of each API path, from the resources' own annotations: OPTIONS answers their {@code Allow}, any
 * other method is 405 with it;</li>
 * <li>{@code /q/*} (health, metrics, OpenAPI, Swagger UI; not dev mode's Dev UI) answers GET, HEAD and OPTIONS only.</li>
 * </ul>
 * Of several {@code Authorization} headers only the first is kept, for every mechanism alike.
 */
@ApplicationScoped
public class HttpGuards {

    /** Longest request line (method, URI, version) answered: the API's longest is a few hundred characters. */
    public static final int MAX_REQUEST_LINE = 4096;
    /** Most bytes of request headers answered. */
    public static final int MAX_HEADER_BYTES = 20 * 1024;
    /** Largest request body answered: a mirror's config, with an inline truststore, is far smaller. */
    public static final long MAX_BODY_BYTES = 1024 * 1024;
    /** The most of a refused body read and thrown away so that its client gets the 413 (see guard). */
    static final long MAX_DRAINED_BYTES = 4 * MAX_BODY_BYTES;

    private static final Set<HttpMethod> WITH_BODY = Set.of(HttpMethod.POST, HttpMethod.PUT, HttpMethod.PATCH);
    private static final String OPERATIONS_ALLOW = "GET, HEAD, OPTIONS";

    private final ObjectMapper json;
    private final MirrorMetrics metrics;
    /** API path templates as regexes, with the methods each allows. */
    private final Map<Pattern, Set<String>> api;

    public HttpGuards(ObjectMapper json, MirrorMetrics metrics) {
        this.json = json;
        this.metrics = metrics;
        this.api = methodsByPath(
                MirrorResource.class, TopicResource.class, ServiceConfigResource.class, VerificationResource.class);
    }

    void install(@Observes Router router) {
        router.route().order(Integer.MIN_VALUE).handler(this::guard);
    }

    private void guard(RoutingContext context) {
        var request = context.request();
        String path = context.normalizedPath();
        List<String> authorization = request.headers().getAll(HttpHeaders.AUTHORIZATION);
        if (authorization.size() > 1) {
            // the first is the caller's credential: Quarkus' Basic mechanism would take a Basic one from any position
            // (and answer 401, or authenticate as that user), its JWT one only the first
            request.headers().set(HttpHeaders.AUTHORIZATION, authorization.get(0));
        }
        if (request.method().name().length() + request.uri().length() + 10 > MAX_REQUEST_LINE) {
            problem(context, 414, "The request line is longer than " + MAX_REQUEST_LINE + " characters", Map.of());
            return;
        }
        long headerBytes = 0;
        for (var header : request.headers()) {
            headerBytes += header.getKey().length() + header.getValue().length() + 4;
        }
        if (headerBytes > MAX_HEADER_BYTES) {
            problem(context, 431, "The request headers are larger than " + MAX_HEADER_BYTES + " bytes", Map.of());
            return;
        }
        if ((path.equals("/q") || path.startsWith("/q/")) && !path.startsWith("/q/dev-ui")) { // dev mode's UI posts
            operations(context, request.method());
            return;
        }
        if (!path.startsWith("/v1/")) {
            context.next();
            return;
        }
        if (contentLength(context) > MAX_BODY_BYTES) {
            if (request.version() != HttpVersion.HTTP_2) {
                // HTTP/1.1: the connection closes once the answer is out and the body the client is still sending has
                // been read and thrown away. Closing with unread bytes makes TCP reset the connection, and a client
                // still writing then loses the answer (seen as "header parser received no bytes", 9 in 200 tries).
                // A body declared larger than MAX_DRAINED_BYTES is not read: the connection closes at once (its
                // client may then miss the answer, as before). HTTP/2 resets just the stream.
                context.response().putHeader("Connection", "close");
                if (contentLength(context) <= MAX_DRAINED_BYTES) {
                    request.handler(ignored -> {});
                    request.endHandler(ignored -> request.connection().close());
                    request.resume();
                } else {
                    context.response()
                            .endHandler(ignored -> request.connection().close());
                }
            }
            problem(context, 413, "The request body is larger than " + MAX_BODY_BYTES + " bytes", Map.of());
            return;
        }
        Set<String> allowed = allowed(path.replace("%3A", ":").replace("%3a", ":"));
        if (allowed != null && request.method() == HttpMethod.OPTIONS) {
            context.response()
                    .setStatusCode(204)
                    .putHeader("Allow", String.join(", ", allowed))
                    .end();
            return;
        }
        if (allowed != null && !allowed.contains(request.method().name())) {
            problem(
                    context,
                    405,
                    request.method().name() + " is not allowed here; allowed: " + String.join(", ", allowed),
                    Map.of("Allow", String.join(", ", allowed)));
            return;
        }
        if (allowed == null && request.method() == HttpMethod.OPTIONS) {
            problem(context, 404, "No such resource: " + path, Map.of());
            return;
        }
        if (WITH_BODY.contains(request.method()) && hasBody(context) && !isJson(request.getHeader("Content-Type"))) {
            problem(
                    context,
                    415,
                    "A request body must be sent as 'Content-Type: application/json'"
                            + (request.getHeader("Content-Type") == null ? "; the request had no Content-Type" : ""),
                    Map.of());
            return;
        }
        context.next();
    }

    private void operations(RoutingContext context, HttpMethod method) {
        if (method == HttpMethod.OPTIONS) {
            context.response()
                    .setStatusCode(204)
                    .putHeader("Allow", OPERATIONS_ALLOW)
                    .end();
        } else if (method == HttpMethod.GET || method == HttpMethod.HEAD) {
            context.next();
        } else {
            problem(
                    context,
                    405,
                    method.name() + " is not allowed on operations endpoints; allowed: " + OPERATIONS_ALLOW,
                    Map.of("Allow", OPERATIONS_ALLOW));
        }
    }

    private static boolean hasBody(RoutingContext context) {
        return context.request().getHeader("Content-Length") != null
                ? contentLength(context) != 0
                : context.request().getHeader("Transfer-Encoding") != null;
    }

    /** The declared body length; -1 when none is declared or it is not a number (Vert.x refuses those itself). */
    private static long contentLength(RoutingContext context) {
        try {
            String length = context.request().getHeader("Content-Length");
            return length == null ? -1 : Long.parseLong(length.trim());
        } catch (NumberFormatException e) {
            return -1;
        }
    }

    private static boolean isJson(String contentType) {
        if (contentType == null) {
            return false;
        }
        String mediaType = contentType.split(";", 2)[0].trim().toLowerCase(Locale.ROOT);
        return mediaType.equals("application/json");
    }

    /** The methods the API allows on the path (with HEAD where GET is, and OPTIONS), or null when no API path matches. */
    private Set<String> allowed(String path) {
        Set<String> methods = null;
        for (var entry : api.entrySet()) {
            if (entry.getKey().matcher(path).matches()) {
                methods = methods == null ? new TreeSet<>() : methods;
                methods.addAll(entry.getValue());
            }
        }
        if (methods != null) {
            if (methods.contains("GET")) {
                methods.add("HEAD");
            }
            methods.add("OPTIONS");
        }
        return methods;
    }

    private void problem(RoutingContext context, int status, String detail, Map<String, String> headers) {
        MirrorError error = status == 404 ? MirrorError.NOT_FOUND : MirrorError.INVALID_REQUEST;
        metrics.apiError(error);
        AuditLog.rejected(context.request(), status);
        Problem problem = Problem.of(error, status, detail, context.normalizedPath());
        String body;
        try {
            body = json.writeValueAsString(problem);
        } catch (JsonProcessingException e) {
            throw new IllegalStateException(e);
        }
        var response = context.response().setStatusCode(status).putHeader("Content-Type", Problem.MEDIA_TYPE);
        headers.forEach(response::putHeader);
        response.end(body);
    }

    /** Path template regex to HTTP methods, read from the JAX-RS annotations of the resources (so they cannot drift). */
    static Map<Pattern, Set<String>> methodsByPath(Class<?>... resources) {
        Map<String, Set<String>> byTemplate = new LinkedHashMap<>();
        for (Class<?> resource : resources) {
            String base = resource.getAnnotation(Path.class).value();
            for (Method method : resource.getDeclaredMethods()) {
                String verb = httpMethod(method);
                if (verb == null) {
                    continue;
                }
                Path sub = method.getAnnotation(Path.class);
                String template = sub == null ? base : base + (sub.value().startsWith("/") ? "" : "/") + sub.value();
                byTemplate.computeIfAbsent(template, t -> new TreeSet<>()).add(verb);
            }
        }
        Map<Pattern, Set<String>> byPattern = new LinkedHashMap<>();
        byTemplate.forEach((template, methods) -> byPattern.put(regex(template), Set.copyOf(methods)));
        return byPattern;
    }

    private static String httpMethod(Method method) {
        for (var annotation : method.getAnnotations()) {
            jakarta.ws.rs.HttpMethod verb = annotation.annotationType().getAnnotation(jakarta.ws.rs.HttpMethod.class);
            if (verb != null) {
                return verb.value();
            }
        }
        return null;
    }

    /** {@code /v1/mirrors/{name}/config} as {@code \Q/v1/mirrors/\E[^/]+\Q/config\E}. */
    private static Pattern regex(String template) {
        List<String> parts = new ArrayList<>();
        for (String piece : template.split("\\{[^}]+}", -1)) {
            parts.add(piece.isEmpty() ? "" : Pattern.quote(piece));
        }
        return Pattern.compile(String.join("[^/]+", parts));
    }
}
