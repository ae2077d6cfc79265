#version 330 core
// MuJoCo's lighting (OpenGL's fixed-function model): emission, then per light ambient, diffuse
// and Blinn-Phong specular (exponent 128 shininess), with attenuation and spot cones; the
// headlight is light 0. The renderer replaces /* LIGHTS */ below by one call of shade() per
// light of the model with its type and shadow map as literals, so that a software rasteriser
// runs straight-line code (no loop, no branch on the light's type). Up to two lights cast
// shadows (shadow maps, the hardware's 2x2 comparison filter). Textures (2D with mipmaps, cube)
// modulate the colour; planes fade into the haze at the horizon, and the optional fog follows
// the distance. The mirror pass writes the reflective plane's reflectance as alpha (u_alpha),
// which the plane then blends by. The renderer compiles a variant per set of the features a
// batch of geoms uses (TEXTURE, HAZE, FOG defined before this text), so that a software
// rasteriser does not run the code of the others for every pixel.

in vec3 v_world;
in vec3 v_normal;
in vec3 v_local;
in vec3 v_scaled;
in vec4 v_color;
flat in vec4 v_material;
flat in vec4 v_texmap;
in vec4 v_shadow0;
in vec4 v_shadow1;

#define MAXLIGHT 8
uniform vec3 u_lpos[MAXLIGHT];
uniform vec3 u_ldir[MAXLIGHT];
uniform vec3 u_lambient[MAXLIGHT];
uniform vec3 u_ldiffuse[MAXLIGHT];
uniform vec3 u_lspecular[MAXLIGHT];
uniform vec3 u_lattenuation[MAXLIGHT];
uniform vec2 u_lspot[MAXLIGHT];       // cos(cutoff), exponent

uniform sampler2DShadow u_shadow_map0;
uniform sampler2DShadow u_shadow_map1;
uniform float u_shadow_on;
uniform sampler2D u_tex2d;
uniform samplerCube u_texcube;
uniform float u_alpha;                // output alpha if >= 0 (the mirror pass), else the geom's
uniform vec3 u_eye;
uniform vec2 u_haze_range;            // planes: distance where the haze starts and is full
uniform vec3 u_haze_color;
uniform vec3 u_fog;                   // start, end (0: off), unused
uniform vec3 u_fog_color;

out vec4 f_color;

float shadow_at(int k, float ndotl) {
    vec4 c = k == 0 ? v_shadow0 : v_shadow1;
    vec3 s = c.xyz / c.w * 0.5 + 0.5;
    if (c.w <= 0.0 || any(greaterThan(abs(s.xy - 0.5), vec2(0.5)))) return 1.0;
    // beyond the map's far plane (a floor behind the casters): shadowed where a caster is
    float ref = min(s.z - mix(0.004, 0.0008, ndotl), 0.99999);
    return k == 0 ? texture(u_shadow_map0, vec3(s.xy, ref))
                  : texture(u_shadow_map1, vec3(s.xy, ref));
}

// light i of type t (0 spot, 1 directional, 2 point) with shadow map k (-1: none)
vec3 shade(int i, int t, int k, vec3 n, vec3 to_eye, vec3 base, float specular, float shininess) {
    vec3 l;
    float atten = 1.0;
    if (t == 1) {
        l = -u_ldir[i];
    } else {
        vec3 d = u_lpos[i] - v_world;
        float dist = length(d);
        l = d / max(dist, 1e-9);
        vec3 a = u_lattenuation[i];
        atten = 1.0 / max(a.x + a.y * dist + a.z * dist * dist, 1e-6);
        if (t == 0) {                     // spot: cone and falloff
            float c = dot(-l, u_ldir[i]);
            atten *= c < u_lspot[i].x ? 0.0 : pow(max(c, 1e-6), u_lspot[i].y);
        }
    }
    float ndotl = max(dot(n, l), 0.0);
    float lit = atten;
    if (k >= 0 && u_shadow_on > 0.5)
        lit *= shadow_at(k, ndotl);
    // Blinn-Phong's cos^shininess by Schlick's rational approximation (no exp2/log2 per pixel:
    // a software rasteriser pays dearly for pow)
    float c = max(dot(n, normalize(l + to_eye)), 0.0);
    float spec = ndotl > 0.0 ? c / (shininess - shininess * c + c) : 0.0;
    return u_lambient[i] * base + lit * (u_ldiffuse[i] * base * ndotl
                                         + u_lspecular[i] * specular * spec);
}

void main() {
    vec3 n = normalize(gl_FrontFacing ? v_normal : -v_normal);
    vec3 to_eye = normalize(u_eye - v_world);
    vec3 base = v_color.rgb;
#ifdef TEXTURE
    float mode = v_texmap.w;
    if (mode > 1.5) {                     // cube texture: the direction from the object's centre
        vec3 d = normalize(v_local);
        base *= texture(u_texcube, vec3(d.x, d.z, -d.y)).rgb;
    } else if (mode > 0.5) {              // 2D: per unit length (uniform) or over the object
        vec2 uv = (v_texmap.z > 0.5 ? v_scaled.xy : v_local.xy) * 0.5 * v_texmap.xy;
        base *= texture(u_tex2d, uv).rgb;
    }
#endif
    float specular = v_material.y;
    float shininess = max(v_material.z * 128.0, 1.0);
    vec3 color = v_material.x * base;
    /* LIGHTS */
#ifdef HAZE
    if (u_haze_range.y > 0.0)
        color = mix(color, u_haze_color, smoothstep(u_haze_range.x, u_haze_range.y,
                                                    length(u_eye - v_world)));
#endif
#ifdef FOG
    if (u_fog.y > 0.0)
        color = mix(color, u_fog_color, clamp((length(u_eye - v_world) - u_fog.x)
                                              / max(u_fog.y - u_fog.x, 1e-6), 0.0, 1.0));
#endif
    f_color = vec4(color, u_alpha >= 0.0 ? u_alpha : v_color.a);
}
