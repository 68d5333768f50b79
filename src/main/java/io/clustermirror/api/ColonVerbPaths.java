package io.clustermirror.api;

import io.vertx.ext.web.Router;
import jakarta.enterprise.context.ApplicationScoped;
import jakarta.enterprise.event.Observes;

/**
 * Verb paths such as {@code /topics:start} arrive as {@code /topics%3Astart} from clients that encode
 * the colon (RestAssured, some SDKs). Both spellings mean the same resource, so the encoded one is
 * rerouted to the plain one before JAX-RS matching, which compares raw paths.
 */
@ApplicationScoped
public class ColonVerbPaths {

    void install(@Observes Router router) {
        router.route().order(Integer.MIN_VALUE).handler(context -> {
            String path = context.request().path();
            if (path != null && (path.contains("%3A") || path.contains("%3a"))) {
                String query = context.request().query();
                String decoded = path.replace("%3A", ":").replace("%3a", ":");
                context.reroute(query == null ? decoded : decoded + "?" + query);
            } else {
                context.next();
            }
        });
    }
}
