/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Fuzzes one node's `linkprobectl snapshot` as `fabric --snapshots` reads it (a file copied from every
 * node of a cluster, none of them trusted): its Objects into the fabric model (neighbours, paths,
 * switches, their Links and the sweep's LinkJudgements), the merge of the edges' two ends, the switch tree
 * topology and verify build, and the Graphviz picture of it all. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "ctl/fabric/fabric-model.h"
#include "ctl/fabric/fabric-sides.h"
#include "ctl/fabric/fabric-tree.h"
#include "ctl/linkprobectl-fabric-local.h"
#include "ctl/linkprobectl-fabric.h"
#include "shared/json-util.h"
#include "shared/macros.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
        _cleanup_(json_object_putp) json_object *doc = NULL, *model = NULL;
        _cleanup_(fabric_sides_done) FabricSides sides = {};
        _cleanup_(fabric_tree_done) FabricTree tree = {};
        _cleanup_(freep) char *error = NULL, *dot = NULL;
        json_tokener *tok;
        size_t dot_size = 0;
        FILE *f;

        if (size > 64 * 1024)
                return 0;
        tok = json_tokener_new();
        if (!tok)
                return 0;
        doc = json_tokener_parse_ex(tok, (const char *) data, (int) size);
        json_tokener_free(tok);
        if (!json_object_is_type(doc, json_type_object))
                return 0;
        model = fabric_model_new("snapshots");
        if (!model)
                return 0;
        if (fabric_add_local_view(model, &sides, json_object_object_get(doc, "Node"), json_object_object_get(doc, "Objects"),
                                  false) < 0 ||
            fabric_sides_merge(model, &sides) < 0)
                return 0;
        /* Every switch link's figure, as LinkSpeed reads it: what the model keeps is numbers. */
        json_object *links = json_object_object_get(model, "SwitchLinks");
        for (size_t i = 0; i < json_array_len(links); i++)
                if (fabric_tree_capable_gbps(json_object_array_get_idx(links, i)) < 0)
                        abort();
        if (fabric_tree_build(model, &tree, &error) == 0 && tree.n_order > tree.n_switches)
                abort();
        f = open_memstream(&dot, &dot_size);
        if (f) {
                (void) fabric_print_dot(model, f);
                fclose(f);
        }
        return 0;
}
